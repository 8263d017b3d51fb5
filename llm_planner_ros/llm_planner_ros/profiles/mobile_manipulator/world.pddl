; The reference world of the mobile manipulator: the objects of a small apartment and how they
; start. An instance is <class>_<id>, its id unique in the world. A robot reports its own world
; over GetWorldState; this file is for the reference skill server, dry runs and tests.
(define (problem apartment)
  (:domain mobile_manipulator)
  (:objects
    robot_1 - robot
    kitchen_counter_2 dining_table_3 sofa_4 desk_5 dock_6 - place
    fridge_7 cupboard_8 - container
    kettle_9 lamp_10 tv_11 - appliance
    person_12 - person
    cup_13 mug_14 apple_15 milk_16 book_17 remote_18 phone_19 plate_20 - item
  )
  (:init
    (at robot_1 dock_6) (hand_free robot_1)
    (on cup_13 kitchen_counter_2) (on apple_15 dining_table_3) (on book_17 desk_5)
    (on remote_18 sofa_4) (on phone_19 desk_5)
    (in milk_16 fridge_7) (in mug_14 cupboard_8) (in plate_20 cupboard_8)
  )
  (:goal (and))
)
